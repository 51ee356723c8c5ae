"""The studies' view of reasonlab/assets.py: what their runs need from outside the lab, and
whether this machine has it. The code lives in the library so that `reasonlab studies --scale`
can look the assets up again without importing a study (importing anything under
reasonlab.studies imports every family)."""

from reasonlab.assets import Asset, asset_specs, check_assets, look_for, needed

__all__ = ["Asset", "asset_specs", "check_assets", "look_for", "needed"]
