-- wrk script for the messenger's send throughput: one request per line of WRK_TARGETS
-- ("METHOD<TAB>PATH<TAB>TOKEN"), taken in turn, with the body WRK_BODY; "{cid}" in the path or
-- the body becomes a fresh id per request (Gatehouse's clientMessageId, Matrix's txnId).
-- Ends with one JSON line so the orchestrator parses numbers, not prose.
local targets = {}
for line in (os.getenv("WRK_TARGETS") or ""):gmatch("[^\n]+") do
  local method, path, token = line:match("([^\t]+)\t([^\t]+)\t([^\t]+)")
  targets[#targets + 1] = { method = method, path = path, token = token }
end
local body = os.getenv("WRK_BODY") or ""
local prefix = ""
local counter = 0
local next_target = 0

function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6) + #tostring({}))
  prefix = string.format("%08x", math.random(0, 0x7fffffff))
end

function request()
  next_target = next_target % #targets + 1
  counter = counter + 1
  local cid = prefix .. "-" .. counter
  local t = targets[next_target]
  local headers = { ["Authorization"] = "Bearer " .. t.token, ["Content-Type"] = "application/json" }
  return wrk.format(t.method, (t.path:gsub("{cid}", cid)), headers, (body:gsub("{cid}", cid)))
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"non2xx":%d,"errors":%d}\n',
    summary.requests, seconds, (summary.requests - e.status) / seconds,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, e.status, e.connect + e.read + e.write + e.timeout))
end
