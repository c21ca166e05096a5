--[[
  Extends a lock's expiry, if the caller still owns it.

  Input:
    KEYS[1] the lock key
    ARGV[1] the owner token the lock was taken with (SET NX PX)
    ARGV[2] the new time to live, in milliseconds

  Output:
    1 - renewed: the key holds ARGV[1] and now expires in ARGV[2] ms
    0 - lost: the key is gone (expired) or holds another owner's token
]]
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
