"""Names of older config versions: how old config files and the config.json of old run folders
load under today's names, and the names the run id hashes.

Two directions, both here and nowhere else:

- input (`upgrade_model_keys`, `upgrade_train_keys`): a ModelConfig / TrainConfig dict written
  under an old name loads to today's config (`reasonlab runs show/diff` read old folders; old
  config files and overrides keep working). An old name given beside its new one, or a value
  that disagrees with it, is one error line. Old dumps hold null for an unset key: skipped.
- the run id (`id_view`): a dump under the names of the first version, which `config_id`
  (train/config.py) hashes, so that a rename changes no stored run's id. No old name is ever
  reused for something else, so an old key never means something new (docs/model.md §1).
"""

from __future__ import annotations

from typing import Any

from reasonlab.config import StrictModel

# model.freeze is imported where it is used: importing it imports the reasonlab.model package,
# whose ModelConfig imports this module

# -- ModelConfig ------------------------------------------------------------------------------

RENAMED_FIELDS = {"norm": "norm_position", "normalization": "norm_layer"}
"""Old ModelConfig field names -> new ones: `norm` (where the normalization sits) stood beside
`normalization` (which layer it is)."""

RENAMED_ARCHS = {"mlp": "mlp_baseline"}
"""Old MODELS names -> new ones: the abstract-symbols MLP baseline was "mlp", beside the MLPS
registry of feed-forward blocks and the `mlp` field that selects one."""

MOVED_OPTIONS: dict[str, tuple[str, str, str]] = {
    "identity_terms": ("attention", "identity", "terms"),
    "identity_zero_diag": ("attention", "identity", "zero_diag"),
    "mlp_equality": ("arch", "mlp_baseline", "equality"),
    "init_gamma": ("init", "rate", "gamma"),
}
"""Flat ModelConfig keys of the time before variants owned their options -> (field, entry,
option): the option of that entry's Config. Their runs hash the sub-config: a run naming a
non-default entry got a new id when its options moved (docs/model.md §1)."""


def upgrade_model_keys(data: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """A ModelConfig dict under today's names: RENAMED_FIELDS and RENAMED_ARCHS renamed,
    `kv_groups` (query heads per key/value head) converted to `n_kv_heads` (key/value heads),
    MOVED_OPTIONS moved into the sub-config of the entry that reads them. `defaults`: the
    ModelConfig's field defaults (for a sub-config or head count the dict does not give)."""
    for old, new in RENAMED_FIELDS.items():
        if old in data:
            if data.get(new) is not None:
                raise ValueError(f"{old} (the old name of {new}) and {new} are both set; give "
                                 f"{new} only")
            data[new] = data.pop(old)
    arch = data.get("arch")
    if isinstance(arch, str) and arch in RENAMED_ARCHS:
        data["arch"] = RENAMED_ARCHS[arch]
    elif isinstance(arch, dict) and arch.get("name") in RENAMED_ARCHS:
        data["arch"] = {**arch, "name": RENAMED_ARCHS[arch["name"]]}
    _kv_groups(data, defaults["n_heads"])
    for old, (field, entry, option) in MOVED_OPTIONS.items():
        value = data.pop(old, None)
        if value is None:
            continue
        sub = data.get(field, defaults[field])
        if isinstance(sub, str):
            sub = {"name": sub}
        elif isinstance(sub, StrictModel):  # a VariantConfig (the field's default, say)
            sub = sub.model_dump()
        elif not isinstance(sub, dict):
            raise ValueError(f"{field} must be a name or an object with a \"name\" key")
        if sub.get("name") != entry:
            raise ValueError(f"{old} is an option of {field}={entry!r} (now {field}."
                             f"{option}), not of {field}={sub.get('name')!r}; remove it or set "
                             f"{field}={{\"name\": \"{entry}\", \"{option}\": ...}}")
        if option in sub and sub[option] != value:
            raise ValueError(f"{old}={value!r} (the old name of {field}.{option}) disagrees "
                             f"with {field}.{option}={sub[option]!r}; give {field}.{option} "
                             "only")
        data[field] = {**sub, option: value}
    return data


def _kv_groups(data: dict[str, Any], default_heads: int) -> None:
    """The old `kv_groups` (query heads per key/value head) -> `n_kv_heads` (key/value heads;
    None for multi-head attention, one group per head)."""
    groups = data.pop("kv_groups", None)
    if groups is None:
        return
    n_heads = data.get("n_heads", default_heads)
    if type(groups) is not int or type(n_heads) is not int or groups <= 0 or n_heads % groups:
        raise ValueError(f"kv_groups={groups} (the old name: query heads per key/value "
                         f"head) must divide n_heads={n_heads}; write n_kv_heads instead")
    if data.get("n_kv_heads") not in (None, n_heads // groups):
        raise ValueError(f"kv_groups={groups} and n_kv_heads={data['n_kv_heads']} disagree "
                         f"(n_heads={n_heads}); keep n_kv_heads only")
    data["n_kv_heads"] = None if groups == 1 else n_heads // groups


def model_id_view(dump: dict[str, Any]) -> dict[str, Any]:
    """A ModelConfig dump (exclude_defaults) under the names the run id hashes: RENAMED_FIELDS
    and RENAMED_ARCHS."""
    fields = {new: old for old, new in RENAMED_FIELDS.items()}
    out = {fields.get(k, k): v for k, v in dump.items()}
    archs = {new: old for old, new in RENAMED_ARCHS.items()}
    arch = out.get("arch")
    if isinstance(arch, dict) and arch.get("name") in archs:
        out["arch"] = {**arch, "name": archs[arch["name"]]}
    return out


# -- TrainConfig ------------------------------------------------------------------------------

LEGACY_INIT = {"pretrained": "a shipped checkpoint", "pretrain": "a pretraining run"}
"""Old TrainConfig keys -> what they held, now `init_from`'s value (a name or a TrainConfig)."""

LEGACY_TRAINABLE = {"train": "groups", "train_only": "prefixes"}
"""Old TrainConfig keys -> the `trainable` policy they are (groups, or name prefixes)."""


def upgrade_train_keys(data: dict[str, Any]) -> dict[str, Any]:
    """Old keys (LEGACY_INIT, LEGACY_TRAINABLE) -> `init_from` / `trainable`."""
    for keys, field in ((LEGACY_INIT, "init_from"), (LEGACY_TRAINABLE, "trainable")):
        given = {k: data.pop(k) for k in list(keys) if k in data}
        given = {k: v for k, v in given.items() if v is not None}
        if given and (len(given) > 1 or data.get(field) is not None):
            named = [*given, *([field] if data.get(field) is not None else [])]
            raise ValueError(f"{' and '.join(named)} are all set ({', '.join(keys)}: older "
                             f"names of {field}); give {field} only")
        for old, value in given.items():
            if field == "trainable":
                if keys[old] == "groups":
                    from reasonlab.model.freeze import POSITIONS, resolve_groups

                    # before the backbone's own table and FPT's added one were two groups,
                    # "positions" named whichever the model had (model/freeze.py POSITIONS)
                    value = resolve_groups([*value, *POSITIONS] if isinstance(value, list)
                                           and "positions" in value else value)
                value = {keys[old]: value}
            data[field] = value
    return data


def _legacy_groups(groups: list[str]) -> list[str]:
    """Groups as the id has always hashed them: both position groups (POSITIONS, what the old
    "positions" meant) are the old "positions"; the backbone's own table alone, which the old
    names could not say, hashes as "own_positions", so that it never shares an old id."""
    from reasonlab.model.freeze import POSITIONS

    if set(POSITIONS) <= set(groups):
        return [g for g in groups if g != "added_positions"]
    return ["own_positions" if g == "positions" else g for g in groups]


def id_view(dump: dict[str, Any]) -> dict[str, Any]:
    """A TrainConfig dump (exclude_defaults) under the names the run id has always hashed: the
    old TrainConfig keys (LEGACY_INIT, LEGACY_TRAINABLE) and ModelConfig names
    (model_id_view), dtype "fp32" as the default (config_id)."""
    out = {k: v for k, v in dump.items() if not (k == "dtype" and v == "fp32")}
    init = out.pop("init_from", None)
    if isinstance(init, str):
        out["pretrained"] = init
    elif isinstance(init, dict):
        out["pretrain"] = id_view(init)
    policy = out.pop("trainable", None)
    if policy is not None:
        (kind, value), = policy.items()
        out[{v: k for k, v in LEGACY_TRAINABLE.items()}[kind]] = (
            _legacy_groups(value) if kind == "groups" else value)
    if isinstance(out.get("model"), dict):
        out["model"] = model_id_view(out["model"])
    return out
