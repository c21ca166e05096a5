--[[
  Records what a response (any status but 429) said about the shared rate limit.

  The state hash holds:
    remaining, resetAt  the allowance left in the current window and its end
    sure                set when resetAt is known (X-RateLimit-Reset, or a
                        learned window length), unset while it is a guess
    headerless          the API sent no X-RateLimit-Remaining: no pacing
    limit               the last X-RateLimit-Limit
    last, lastAt        the lowest allowance reported since the window began,
                        and when it was recorded
    riseAt, riseSure    when the window began, i.e. the allowance came back
                        (riseSure unset: only the first answer seen)
    windowMs, windowBy  the learned window length, and what taught it
                        (`429`: a Retry-After; `rise`: the time between two rises)
    pausedUntil, pausedAt  the pause after a 429 (pace-pause-2.lua)
    probeAt             when the probe of a spent, guessed window goes (pace-acquire-2.lua)
    offsetLo, offsetLoAt, offsetHi, offsetHiAt
                        the bounds of the offset between the API's clock and
                        Redis time (API − Redis, ms) learned from Date headers,
                        and when each was learned (src/api/clock-offset.ts)
    epochReset          set while answers state X-RateLimit-Reset in epoch
                        seconds (the second edge is then worth learning:
                        src/api/second-edge.ts)
    rttMs, answeredAt   a request's round trip (moving average) and when the
                        last answer was recorded; workMs, the caller's own work
                        between an answer and its next request, is
                        pace-acquire-2.lua's

  A rise (a new window) is an answer reporting more allowance than `last`
  to a request sent after `last` was recorded: an allowance only shrinks
  within a window, so an older answer arriving late (concurrent workers) is
  never mistaken for one. Answers to requests sent before the last 429 belong
  to the window that 429 ended and are ignored. X-RateLimit-Reset, when sent,
  states the end outright; an end already past is a finished window's. An
  epoch Reset is on the API's clock: it is converted to Redis time with the
  offset estimated over every response's Date (the tightest bounds seen, as
  src/api/clock-offset.ts describes), taking the lower bound so that the end
  is never waited for early. The time comes from Redis.

  Input:
    KEYS[1] the pacing state hash
    KEYS[2] the probe flag (cleared: the probe has its answer)
    ARGV[1] X-RateLimit-Remaining (0..10^9), or -1 when the header was absent
    ARGV[2] X-RateLimit-Limit (1..10^9), or -1
    ARGV[3] X-RateLimit-Reset as milliseconds until the end, or -1
    ARGV[4] X-RateLimit-Reset as the end in Unix epoch milliseconds, or -1
    ARGV[5] the first guess of the window length in milliseconds (HIRESYNC_RATE_LIMIT_WINDOW)
    ARGV[6] when the request was sent (the time pace-acquire-2.lua gave it)
    ARGV[7] the response's Date header in epoch milliseconds, or -1

  Output:
    0
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = KEYS[1]
local reported = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local resetIn = tonumber(ARGV[3])
local resetEpoch = tonumber(ARGV[4])
local guess = tonumber(ARGV[5])
local sentAt = tonumber(ARGV[6])
local dateMs = tonumber(ARGV[7])
local DAY = 86400000
local DRIFT_PER_MS = 0.0001
local function num(field)
  return tonumber(redis.call('HGET', key, field) or '0')
end
local function done()
  redis.call('PEXPIRE', key, DAY + math.max(0, num('pausedUntil') - now))
  return 0
end

redis.call('DEL', KEYS[2])

local rtt = now - sentAt
if sentAt > 0 and rtt >= 0 and rtt < 60000 then
  local known = redis.call('HGET', key, 'rttMs')
  local ewma = known and (tonumber(known) + (rtt - tonumber(known)) / 4) or rtt
  redis.call('HSET', key, 'rttMs', math.floor(ewma + 0.5), 'answeredAt', now)
end
if resetEpoch >= 0 and dateMs >= 0 then
  redis.call('HSET', key, 'epochReset', '1')
elseif resetIn >= 0 then
  redis.call('HDEL', key, 'epochReset')
end

-- The clock offset (src/api/clock-offset.ts, nextClockOffset): this answer
-- came between sentAt and now, in the API's second dateMs.
local offsetLo = nil
if dateMs >= 0 then
  local ownLo = dateMs - now
  local ownHi = dateMs + 1000 - sentAt
  local knownLo = redis.call('HGET', key, 'offsetLo')
  if knownLo then
    local lo = tonumber(knownLo) - math.floor(math.max(0, now - num('offsetLoAt')) * DRIFT_PER_MS)
    local hi = num('offsetHi') + math.floor(math.max(0, now - num('offsetHiAt')) * DRIFT_PER_MS)
    -- Contradicting bounds prove the stored ones wrong (a clock was set, by any amount).
    if ownLo > hi or ownHi < lo then
      redis.call('HSET', key, 'offsetLo', ownLo, 'offsetLoAt', now, 'offsetHi', ownHi, 'offsetHiAt', now)
      offsetLo = ownLo
    else
      if ownLo > lo then
        redis.call('HSET', key, 'offsetLo', ownLo, 'offsetLoAt', now)
        lo = ownLo
      end
      if ownHi < hi then redis.call('HSET', key, 'offsetHi', ownHi, 'offsetHiAt', now) end
      offsetLo = lo
    end
  else
    redis.call('HSET', key, 'offsetLo', ownLo, 'offsetLoAt', now, 'offsetHi', ownHi, 'offsetHiAt', now)
    offsetLo = ownLo
  end
else
  -- No Date: the lower bound already learned, widened for its age (none: the clocks agree).
  local knownLo = redis.call('HGET', key, 'offsetLo')
  if knownLo then
    offsetLo = tonumber(knownLo) - math.floor(math.max(0, now - num('offsetLoAt')) * DRIFT_PER_MS)
  end
end
if reported < 0 then
  redis.call('HSET', key, 'headerless', '1')
  return done()
end
redis.call('HDEL', key, 'headerless')
if sentAt < num('pausedAt') then return done() end
if limit > 0 then
  redis.call('HSET', key, 'limit', limit)
  if reported > limit then reported = limit end
end

local stated = nil
if resetEpoch >= 0 then
  -- On the API's clock: converted with the estimated offset (localInstantOf; none known: the clocks agree).
  stated = resetEpoch - (offsetLo or 0)
elseif resetIn >= 0 then
  stated = now + resetIn
end
if stated and stated - now > DAY then stated = nil end
-- An end already past (an API clock behind ours, or a finished window's
-- answer): the end is unknown, but the allowance reported still counts.
if stated and stated <= now then stated = nil end

local rem = redis.call('HGET', key, 'remaining')
local resetAt = num('resetAt')
local live = rem and now < resetAt
local last = redis.call('HGET', key, 'last')
local windowMs = num('windowMs')
local span = windowMs > 0 and windowMs or guess
-- Waiting a learned end: a little late rather than early (the window is measured, not stated).
local margin = math.min(250, math.ceil(windowMs / 100))

local first = not last
local rise = (not first) and reported > tonumber(last) and sentAt >= num('lastAt')
if first or rise then
  if rise and reported >= 2 * tonumber(last) + 1 then
    -- The allowance came back after running low: two such rises span a window
    -- (a 429's Retry-After, a direct measurement, takes precedence).
    local previous = num('riseAt')
    -- Only from continuous traffic: the low was seen within one window of
    -- this rise (after an idle spell the interval is idleness). A rise can
    -- only shorten a learned window: rises are seen at or after the reset.
    if redis.call('HGET', key, 'riseSure') and previous > 0 and now - num('lastAt') <= span then
      local interval = now - previous
      if interval >= 100 and interval <= DAY and (windowMs == 0 or interval < windowMs) then
        windowMs = interval
        redis.call('HSET', key, 'windowMs', windowMs, 'windowBy', 'rise')
      end
    end
  end
  redis.call('HSET', key, 'riseAt', now, 'last', reported, 'lastAt', now, 'remaining', reported)
  redis.call('HDEL', key, 'probeAt')
  if rise then redis.call('HSET', key, 'riseSure', '1') else redis.call('HDEL', key, 'riseSure') end
  if stated then
    redis.call('HSET', key, 'resetAt', stated, 'sure', '1')
  elseif windowMs > 0 then
    redis.call('HSET', key, 'resetAt', now + windowMs + margin, 'sure', '1')
  else
    redis.call('HSET', key, 'resetAt', now + guess)
    redis.call('HDEL', key, 'sure')
  end
  return done()
end

if reported < tonumber(last) then redis.call('HSET', key, 'last', reported, 'lastAt', now) end
if live then
  if reported < tonumber(rem) then redis.call('HSET', key, 'remaining', reported) end
  if stated and stated > resetAt + 1000 then
    -- The API says a later window: the one we held is over.
    redis.call('HSET', key, 'remaining', reported, 'resetAt', stated, 'sure', '1')
  elseif stated and (stated < resetAt or not redis.call('HGET', key, 'sure')) then
    -- Every answer states the end plus its own delay on the way here: the earliest is the truest.
    redis.call('HSET', key, 'resetAt', stated, 'sure', '1')
  end
  return done()
end

-- Our end of the window has passed (or a 429 closed it) but the allowance did
-- not come back: the window's start is the last rise if that is recent, else unknown.
redis.call('HSET', key, 'remaining', reported)
redis.call('HDEL', key, 'probeAt')
local riseAt = num('riseAt')
if riseAt < num('pausedAt') or now - riseAt >= 2 * span then
  redis.call('HSET', key, 'riseAt', now)
  redis.call('HDEL', key, 'riseSure')
end
if stated then
  redis.call('HSET', key, 'resetAt', stated, 'sure', '1')
else
  redis.call('HSET', key, 'resetAt', now + span)
  redis.call('HDEL', key, 'sure')
end
return done()
