-- wrk script of scripts/bench: POST one small msgspec command body to the bare app
-- (scripts/bare_app.py), the baseline of the stack without the game server.

wrk.method = "POST"
wrk.path = "/commands"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"command":{"type":"narrate","text":"Meanwhile, across town","seat":1}}'

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
      '"max_us":%d,"mean_us":%.1f,"errors_connect":%d,"errors_read":%d,"errors_write":%d,' ..
      '"errors_status":%d,"errors_timeout":%d,"ok":%d,"bad":%d,"commands":%d,"reads":0,' ..
      '"retired":0,"why":""}\n',
      summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
      latency:percentile(99), latency.max, latency.mean, e.connect, e.read, e.write, e.status,
      e.timeout, summary.requests - e.status, e.status, summary.requests - e.status))
end
