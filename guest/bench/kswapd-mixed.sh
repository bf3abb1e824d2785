# kswapd's helpers beside a CPU-bound task that allocates nothing: the
# pool-N+mixed variants of kswapd.sh, run in their own boot because the
# host runs this one with instruction-counting clocks (see harness/bench.py).
. "$here/kswapd.sh"
