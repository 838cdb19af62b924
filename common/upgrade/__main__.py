"""python -m common.upgrade --infile=old.py --outfile=new.py (see common.upgrade.cli); installed as the
console command `estimator-upgrade`."""

from common.jobs import process
from common.upgrade import cli


def main():
    """The command: absl's flags parsed from sys.argv, then the upgrade (its exit status: 0, or 1 when a file
    failed)."""
    process.run(cli.main, flags_module=cli)


if __name__ == "__main__":
    main()
