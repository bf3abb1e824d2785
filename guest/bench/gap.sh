# Watermark gap sweep: the throttling storm (storm.sh), with the gap g
# between memory.high and the high watermark (and again between the two
# watermarks) at 1/64, 1/32 (what auto chooses for this limit), 1/16 and
# 1/8 of memory.high.  A wider gap leaves the worker more headroom before
# throttling and costs memory the cgroup could have used.
. "$here/storm.sh"
