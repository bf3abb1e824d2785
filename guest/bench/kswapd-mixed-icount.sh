# kswapd-mixed.sh's variants, run by the host under QEMU's -icount: a
# scenario of its own because the clock, not the workload, differs.
. "$here/kswapd.sh"
