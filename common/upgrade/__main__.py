"""python -m common.upgrade --infile=old.py --outfile=new.py (see common.upgrade.cli)."""

from absl import app

from common.upgrade import cli

if __name__ == "__main__":
    app.run(cli.main)
