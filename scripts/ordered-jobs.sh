# Sourced by scripts that run independent jobs side by side (compat/run.sh,
# scripts/sdk-test.sh): at most N at a time, each job's output held in a
# file and printed whole, in the order the jobs were started, as soon as it
# and every job before it have ended, so the log reads as a one-at-a-time
# run's would.
#
#   ordered_init DIR           where the outputs go (DIR/NAME.out) and where
#                              an ended job leaves DIR/NAME.done
#   ordered_run MAX NAME CMD…  runs CMD once fewer than MAX jobs run
#   ordered_wait_below N       waits until fewer than N jobs run
#   ordered_finish             waits for every job and prints what is left
#
# A job without NAME.done did not end (it was killed); its caller says so.

ordered_dir=
ordered_names=()
ordered_printed=0

ordered_init() {
  ordered_dir=$1
}

ordered_print() {
  while [ "$ordered_printed" -lt ${#ordered_names[@]} ] &&
    [ -f "$ordered_dir/${ordered_names[$ordered_printed]}.done" ]; do
    cat "$ordered_dir/${ordered_names[$ordered_printed]}.out"
    ordered_printed=$((ordered_printed + 1))
  done
}

ordered_wait_below() {
  while [ "$(jobs -rp | wc -l)" -ge "$1" ]; do
    wait -n || true
    ordered_print
  done
}

ordered_run() {
  local max=$1 name=$2
  shift 2
  ordered_wait_below "$max"
  ordered_names+=("$name")
  ( "$@"; touch "$ordered_dir/$name.done" ) >"$ordered_dir/$name.out" 2>&1 &
}

ordered_finish() {
  wait || true
  ordered_print
}
