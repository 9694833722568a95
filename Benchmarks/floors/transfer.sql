-- The floor of a transfer (Benchmarks/floors/run.py): the least a transfer of 1 kopeck between two wallets writes, on
-- Gatehouse's own tables, in one prepared statement (one round trip, its own transaction): its idempotency key with
-- its answer, the two wallets locked in id order and their balances moved, the movement and its two entries. What
-- Gatehouse writes besides (the key claimed before it is answered, the payment's chat message, the events of both
-- sides and their counters, the bus's notification, the payee's push) and its round trips are its own cost above
-- this. The wallets are picked from `bench_floor_people` (made by run.py).
\set a random(1, :people)
\set b (:a % :people) + 1
\set k random(1, 2000000000)
WITH picked AS (
  SELECT a.wallet AS pw, a.account AS pa, b.wallet AS qw FROM bench_floor_people a, bench_floor_people b WHERE a.n = :a AND b.n = :b),
locked AS (
  SELECT w.id FROM wallets w, picked WHERE w.id IN (picked.pw, picked.qw) ORDER BY w.id FOR NO KEY UPDATE OF w),
moved AS (
  UPDATE wallets w SET balance = w.balance + CASE WHEN w.id = picked.pw THEN -1 ELSE 1 END FROM picked
  WHERE w.id IN (picked.pw, picked.qw) AND (SELECT count(*) FROM locked) = 2
  RETURNING w.id, w.balance, w.id = picked.pw AS debit),
key AS (
  INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at)
  SELECT pa, 'floor-' || :client_id || '-' || :k, 'f', 201, '{}', now() FROM picked),
movement AS (
  INSERT INTO ledger_transactions (id, kind, debit_wallet_id, credit_wallet_id, amount, created_at)
  SELECT gen_random_uuid(), 'transfer', pw, qw, 1, now() FROM picked RETURNING id)
INSERT INTO ledger_entries (id, transaction_id, wallet_id, amount, balance_after, created_at)
  SELECT gen_random_uuid(), movement.id, moved.id, CASE WHEN moved.debit THEN -1 ELSE 1 END, moved.balance, now() FROM movement, moved;
