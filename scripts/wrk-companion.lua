-- wrk against `vaultctl serve` (issue 39, `vaultbench serve --wrk`): every request a companion post
-- of BATCH one-minute STEPS samples under one paired app's token, the tokens taken in turn.
--
--   wrk -t2 -c16 -d15s --latency -s scripts/wrk-companion.lua https://127.0.0.1:PORT/companion/health \
--       -- TOKENS-FILE MODE BASE BATCH THREADS
--
-- TOKENS-FILE: one bearer token a line (`vaultctl companion pair ... --json`'s "token").
-- MODE: "fresh", each post of an app the next BATCH minutes from BASE (what a phone posts as the
-- day goes on); "repost", each post of an app the same BATCH minutes from BASE with new values
-- (an app that re-posts its last hour: the upsert path).
-- BASE: Unix seconds of the first minute (UTC). Prints one line for vaultbench to read:
-- WRK requests=N seconds=S p50_us=N p99_us=N max_us=N non2xx=N socket_errors=N

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  tokens = {}
  for line in io.lines(args[1]) do
    if #line > 0 then table.insert(tokens, line) end
  end
  mode = args[2] or "fresh"
  base = tonumber(args[3] or "2019600000")
  batch = tonumber(args[4] or "24")
  -- Each thread's Lua state is its own: the thread count comes as an argument. Thread `id`
  -- takes the tokens id+1, id+1+n, ... in turn.
  local nthreads = tonumber(args[5] or "2")
  mine = {}
  for i = id + 1, #tokens, nthreads do table.insert(mine, i) end
  if #mine == 0 then mine = {1} end
  posts = {}
  turn = 0
end

local function minute(t)
  return os.date("!%Y-%m-%d %H:%M", t)
end

function request()
  turn = turn + 1
  local k = mine[(turn - 1) % #mine + 1]
  posts[k] = (posts[k] or 0) + 1
  local first = base
  if mode == "fresh" then first = base + (posts[k] - 1) * batch * 60 end
  local data = {}
  for i = 0, batch - 1 do
    local s = first + i * 60
    table.insert(data, string.format('{"timeRange":"%s/%s","value":%d}', minute(s), minute(s + 60), 10 + (posts[k] + i) % 50))
  end
  local body = '{"metric":"STEPS","data":[' .. table.concat(data, ",") .. ']}'
  return wrk.format("POST", nil, {["Authorization"] = "Bearer " .. tokens[k], ["Content-Type"] = "application/json"}, body)
end

function done(summary, latency, requests)
  local errors = summary.errors
  local non2xx = errors.status
  io.write(string.format("WRK requests=%d seconds=%.3f p50_us=%d p99_us=%d max_us=%d non2xx=%d socket_errors=%d\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99), latency.max, non2xx,
    errors.connect + errors.read + errors.write + errors.timeout))
end
