--[[
  Deletes a lock, if the caller still owns it: a lock that expired and was
  taken by another owner is left to that owner.

  Input:
    KEYS[1] the lock key
    ARGV[1] the owner token the lock was taken with (SET NX PX)

  Output:
    1 - released
    0 - not ours: the key is gone or holds another owner's token
]]
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
