# kswapd's helpers beside a CPU-bound task that allocates nothing, and
# the hog's CPU budget: the pool-N+mixed variants of kswapd.sh, a scenario
# of their own so that they can run more rounds than the streaming ones.
. "$here/kswapd.sh"
