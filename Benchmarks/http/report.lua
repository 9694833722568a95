-- wrk script: optional fixed request (WRK_METHOD, WRK_BODY, WRK_CONTENT_TYPE from the environment)
-- and a one-line JSON summary at the end, so the orchestrator parses numbers, not prose.
local method = os.getenv("WRK_METHOD")
local body = os.getenv("WRK_BODY")
local ctype = os.getenv("WRK_CONTENT_TYPE")
if method then wrk.method = method end
if body then wrk.body = body end
if ctype then wrk.headers["Content-Type"] = ctype end

-- WRK_BODIES: several bodies, one per line, taken in turn (logins spread over many accounts).
local bodies = {}
for line in (os.getenv("WRK_BODIES") or ""):gmatch("[^\n]+") do bodies[#bodies + 1] = line end
if #bodies > 0 then
  local next_body = 0
  function request()
    next_body = next_body % #bodies + 1
    return wrk.format(nil, nil, nil, bodies[next_body])
  end
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,' ..
    '"non2xx":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d}\n',
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    e.status, e.connect, e.read, e.write, e.timeout))
end
