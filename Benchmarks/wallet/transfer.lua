-- wrk script for the wallet's transfers: each request is a payment of 1 kopeck from one of the
-- WRK_PAYERS ("TOKEN<TAB>TAG" lines, taken in turn) to the next payer's tag, with a fresh
-- Idempotency-Key per request (one user intent each). Ends with one JSON line of numbers.
local payers = {}
for line in (os.getenv("WRK_PAYERS") or ""):gmatch("[^\n]+") do
  local token, tag = line:match("([^\t]+)\t([^\t]+)")
  payers[#payers + 1] = { token = token, tag = tag }
end
local prefix = ""
local counter = 0
local next_payer = 0

function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6) + #tostring({}))
  prefix = string.format("%08x", math.random(0, 0x7fffffff))
end

function request()
  counter = counter + 1
  next_payer = next_payer % #payers + 1
  local payer = payers[next_payer]
  local payee = payers[math.random(1, #payers)]
  if payee == payer then payee = payers[next_payer % #payers + 1] end
  local headers = {
    ["Authorization"] = "Bearer " .. payer.token, ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = prefix .. "-" .. counter,
  }
  return wrk.format("POST", "/v1/wallet/transfers", headers, '{"to":{"tag":"' .. payee.tag .. '"},"amount":1}')
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"non2xx":%d,"errors":%d}\n',
    summary.requests, seconds, (summary.requests - e.status) / seconds,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, e.status, e.connect + e.read + e.write + e.timeout))
end
