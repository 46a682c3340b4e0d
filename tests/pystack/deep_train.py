"""deep_train.py <depth> <train.py> [train args]: runs train.py's main() below
<depth> extra Python frames, so that cost.sh-style measurements of the hook
path can take the slope of instructions over Python frames."""
import runpy
import sys

depth, train = int(sys.argv[1]), sys.argv[2]
sys.argv = [train] + sys.argv[3:]


def down(n):
    if n == 0:
        return runpy.run_path(train, run_name="__main__")
    return down(n - 1)


down(depth)
