"""Export a trained policy out of the lab: `python -m rl.export RUN_DIR` (docs/export.md)."""

from rl.export.export_run import FORMATS, Exported, export_run

__all__ = ["FORMATS", "Exported", "export_run"]
