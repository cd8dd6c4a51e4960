--#include accounts/_deliver
return deliver(KEYS, ARGV)
