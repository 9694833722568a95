-- The floor of a send (Benchmarks/floors/run.py): the least a message written to a chat of two writes, on Gatehouse's
-- own tables, in one transaction: the message, an event for each member (their counters raised and the two rows in
-- one statement), the chat's activity, and the notification that tells every instance (NOTIFY, as the default bus
-- does). What Gatehouse does besides (authentication, the membership and privacy read, the rate limit, the frames
-- to the sockets) is its own cost above this. One statement before the transaction picks the chat
-- (`bench_floor_chats`, made by run.py).
\set c random(1, :chats)
SELECT quote_literal(id) AS chat, quote_literal(low_id) AS author, quote_literal(high_id) AS other FROM bench_floor_chats WHERE n = :c \gset
BEGIN;
INSERT INTO messages (id, chat_id, author_id, text, created_at, reply_deleted, client_message_id)
  VALUES (gen_random_uuid(), :chat, :author, 'a message of about the size people send', now(), false, 'floor-' || random()::text)
  RETURNING quote_literal(id) AS m, quote_literal(lower(id::text)) AS k \gset
WITH raised AS (
  INSERT INTO messenger_event_counters (account_id, last_seq) VALUES (:author, 1), (:other, 1)
  ON CONFLICT (account_id) DO UPDATE SET last_seq = messenger_event_counters.last_seq + excluded.last_seq
  RETURNING account_id, last_seq)
INSERT INTO messenger_events (account_id, seq, kind, data, created_at)
  SELECT account_id, last_seq, 'message.created', '{"message":{"text":"a message of about the size people send"}}', now() FROM raised;
UPDATE chats SET last_message_id = :m, activity_key = :k WHERE id = :chat;
SELECT pg_notify('gatehouse_events_floor', 'a frame');
END;
