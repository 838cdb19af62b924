"""python -m common.upgrade --infile=old.py --outfile=new.py (see common.upgrade.cli)."""

from absl import flags

from common.jobs import process
from common.upgrade import cli

__doc__ = cli.__doc__  # (what --help prints above the flags)
flags.adopt_module_key_flags(cli)  # (--help lists the upgrade's flags)

if __name__ == "__main__":
    process.run(cli.main)
