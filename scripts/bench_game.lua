-- wrk script of scripts/bench: a legal mix of Capes game commands and reads, forever legal.
--
-- Run with as many threads as connections (wrk -t N -c N): wrk keeps one Lua state per
-- thread, so with one connection per thread the state below is per connection, and each
-- connection plays its own campaigns in order. Arguments (after --): the campaigns file
-- (lines "campaign_id token_seat1 token_seat2 token_seat3"), the number of threads, the
-- number of turns after which a campaign is retired (its players run out of Story Tokens).
--
-- Each campaign is in the action phase with one Conflict (dice 1 vs 1). One turn is six
-- requests, all answered 200 when the rules accept them:
--   POST start_turn (seat s)           a bought turn costs 1 Story Token (R-PAGE-6)
--   POST roll_die   (seat s)           a super power rated 1 rolls die 1 (R-ABIL-2): Debt +1
--   POST reject_roll ally=1 (seat s)   the die goes back to 1 (R-ROLL-2), s allies to side 1
--   GET  board      (seat s)
--   POST narrate    (seat s+1)
--   POST end_turn   (seat s)
-- then seat s+1 takes the next turn. Consecutive requests of one connection go round-robin
-- over its campaigns. A refused command (any status but 200) retires its campaign.

local threads = {}
local counter = 0

function setup(thread)
   thread:set("tid", counter)
   counter = counter + 1
   table.insert(threads, thread)
end

function init(args)
   local nthreads = tonumber(args[2])
   max_turns = tonumber(args[3]) or 280
   camps = {}
   local i = 0
   for line in io.lines(args[1]) do
      if i % nthreads == tid then
         local id, t1, t2, t3 = line:match("(%S+)%s+(%S+)%s+(%S+)%s+(%S+)")
         table.insert(camps, {id = id, tokens = {t1, t2, t3}, seat = 2, step = 0, turns = 0,
                              alive = true})
      end
      i = i + 1
   end
   cur = 0
   inflight = 1
   ok, bad, commands, reads, retired = 0, 0, 0, 0, 0
   badstatus = ""
end

local function step_of(c)
   local s = c.seat
   if c.step == 0 then
      return "POST", s, '{"command":{"type":"start_turn","character":' .. s .. '}}'
   elseif c.step == 1 then
      return "POST", s, '{"command":{"type":"roll_die","ability":"H' .. s ..
         ' power 1","conflict":1,"die":1,"drive":"Justice"},"narration":"A blast of light"}'
   elseif c.step == 2 then
      return "POST", s, '{"command":{"type":"reject_roll","ally":1}}'
   elseif c.step == 3 then
      return "GET", s, nil
   elseif c.step == 4 then
      return "POST", s % 3 + 1, '{"command":{"type":"narrate","text":"Meanwhile, across town"}}'
   end
   return "POST", s, '{"command":{"type":"end_turn"}}'
end

function request()
   local n = #camps
   for _ = 1, n do
      cur = cur % n + 1
      if camps[cur].alive then break end
   end
   local c = camps[cur]
   inflight = cur
   local method, seat, body = step_of(c)
   if not c.alive then  -- every campaign of this connection retired: read only
      method, seat, body = "GET", 1, nil
   end
   local headers = {["Authorization"] = "Bearer " .. c.tokens[seat]}
   local path = "/campaigns/" .. c.id .. "/board"
   if method == "POST" then
      path = "/campaigns/" .. c.id .. "/commands"
      headers["Content-Type"] = "application/json"
   end
   return wrk.format(method, path, headers, body)
end

function response(status, headers, body)
   local c = camps[inflight]
   if status ~= 200 then
      bad = bad + 1
      if c.alive then
         c.alive = false
         retired = retired + 1
      end
      if #badstatus < 400 then
         badstatus = badstatus .. status .. " " .. string.sub(body or "", 1, 160) .. " | "
      end
      return
   end
   ok = ok + 1
   if not c.alive then
      reads = reads + 1
      return
   end
   if c.step == 3 then reads = reads + 1 else commands = commands + 1 end
   c.step = c.step + 1
   if c.step == 6 then
      c.step = 0
      c.turns = c.turns + 1
      c.seat = c.seat % 3 + 1
      if c.turns >= max_turns then
         c.alive = false
         retired = retired + 1
      end
   end
end

function done(summary, latency, requests)
   local ok_, bad_, cmds, rds, ret, why = 0, 0, 0, 0, 0, ""
   for _, t in ipairs(threads) do
      ok_ = ok_ + t:get("ok")
      bad_ = bad_ + t:get("bad")
      cmds = cmds + t:get("commands")
      rds = rds + t:get("reads")
      ret = ret + t:get("retired")
      if #why < 400 then why = why .. t:get("badstatus") end
   end
   local e = summary.errors
   io.write(string.format(
      'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
      '"max_us":%d,"mean_us":%.1f,"errors_connect":%d,"errors_read":%d,"errors_write":%d,' ..
      '"errors_status":%d,"errors_timeout":%d,"ok":%d,"bad":%d,"commands":%d,"reads":%d,' ..
      '"retired":%d,"why":"%s"}\n',
      summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
      latency:percentile(99), latency.max, latency.mean, e.connect, e.read, e.write, e.status,
      e.timeout, ok_, bad_, cmds, rds, ret, why:gsub('[\\"]', "'"):gsub("%c", " ")))
end
