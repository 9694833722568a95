-- The floor of a transfer (Benchmarks/floors/run.py): the least a transfer of 1 kopeck between two wallets writes,
-- on Gatehouse's own tables, in one transaction: its idempotency key claimed, the two wallets locked and their balances
-- moved, the movement and its two entries, the key's answer stored. What Gatehouse writes besides (the payment's chat
-- message, the events of both sides and their counters, the bus's notification, the payee's push) is its own cost
-- above this. One statement before the transaction picks the wallets (`bench_floor_people`, made by run.py).
\set a random(1, :people)
\set b (:a % :people) + 1
\set k random(1, 2000000000)
SELECT a.wallet AS pw, a.account AS pa, b.wallet AS qw FROM bench_floor_people a, bench_floor_people b WHERE a.n = :a AND b.n = :b \gset
BEGIN;
INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at)
  VALUES (:pa, 'floor-:client_id-:k', 'f', 0, '', now());
SELECT id, balance, paid_day, paid_today FROM wallets WHERE id IN (:pw, :qw) ORDER BY id FOR NO KEY UPDATE;
UPDATE wallets SET balance = balance - 1 WHERE id = :pw;
UPDATE wallets SET balance = balance + 1 WHERE id = :qw;
INSERT INTO ledger_transactions (id, kind, debit_wallet_id, credit_wallet_id, amount, created_at)
  VALUES (gen_random_uuid(), 'transfer', :pw, :qw, 1, now()) RETURNING quote_literal(id) AS t \gset
INSERT INTO ledger_entries (id, transaction_id, wallet_id, amount, balance_after, created_at)
  VALUES (gen_random_uuid(), :t, :pw, -1, 0, now()), (gen_random_uuid(), :t, :qw, 1, 0, now());
UPDATE idempotency_keys SET status = 201, body = '{}' WHERE account_id = :pa AND key = 'floor-:client_id-:k';
END;
