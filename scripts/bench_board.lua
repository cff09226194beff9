-- wrk script of scripts/bench: GET /campaigns/{id}/board, round-robin over the campaigns of the
-- campaigns file (lines "campaign_id token_seat1 ..."; seat 1's token), each connection starting
-- at a campaign of its own. The campaigns are at the mix's starting point: a scene being
-- played, a Conflict on the table (a mid-scene board).
local counter = 0
function setup(thread) thread:set("tid", counter); counter = counter + 1 end
function init(args)
   camps = {}
   for line in io.lines(args[1]) do
      local id, t1 = line:match("(%S+)%s+(%S+)")
      table.insert(camps, {id = id, token = t1})
   end
   cur = tid
   bad = 0
end
function request()
   cur = cur % #camps + 1
   local c = camps[cur]
   return wrk.format("GET", "/campaigns/" .. c.id .. "/board", {["Authorization"] = "Bearer " .. c.token}, nil)
end
function response(status, headers, body) if status ~= 200 then bad = bad + 1 end end
function done(summary, latency, requests)
   io.write(string.format('BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f,"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d,"ok":%d,"bad":%d,"commands":0,"reads":%d,"retired":0,"why":""}\n',
      summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean, summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout, summary.requests - summary.errors.status, summary.errors.status, summary.requests))
end
