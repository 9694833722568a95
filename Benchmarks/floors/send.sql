-- The floor of a send (Benchmarks/floors/run.py): the least a message written to a chat of two writes, on Gatehouse's
-- own tables, in one prepared statement (one round trip, its own transaction): the message, an event for each member
-- (their counters raised, in the pair's order, and the two rows), the chat's activity, and the notification that
-- tells every instance (NOTIFY, as the default bus does). What Gatehouse does besides (authentication, the
-- membership and privacy read, the rate limit, the frames to the sockets) and its round trips are its own cost above
-- this. The chat is picked from `bench_floor_chats` (made by run.py).
\set c random(1, :chats)
\set k random(1, 2000000000)
WITH picked AS (
  SELECT id AS chat, low_id AS author, high_id AS other FROM bench_floor_chats WHERE n = :c),
message AS (
  INSERT INTO messages (id, chat_id, author_id, text, created_at, reply_deleted, client_message_id)
  SELECT gen_random_uuid(), chat, author, 'a message of about the size people send', now(), false, 'floor-' || :client_id || '-' || :k
  FROM picked RETURNING id, chat_id),
raised AS (
  INSERT INTO messenger_event_counters (account_id, last_seq)
  SELECT author, 1 FROM picked UNION ALL SELECT other, 1 FROM picked
  ON CONFLICT (account_id) DO UPDATE SET last_seq = messenger_event_counters.last_seq + excluded.last_seq
  RETURNING account_id, last_seq),
events AS (
  INSERT INTO messenger_events (account_id, seq, kind, data, created_at)
  SELECT account_id, last_seq, 'message.created', '{"message":{"text":"a message of about the size people send"}}', now() FROM raised),
activity AS (
  UPDATE chats c SET last_message_id = message.id, activity_key = lower(message.id::text) FROM message WHERE c.id = message.chat_id)
SELECT pg_notify('gatehouse_events_floor', 'a frame');
