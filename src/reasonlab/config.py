"""Base class for typed configs: unknown keys rejected, errors name the field."""

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from reasonlab.errors import ConfigError


class StrictModel(BaseModel):
    """Frozen, typed, rejects unknown keys. Derived values are properties."""

    # allow_inf_nan=False: `optim.lr=Infinity` parses as a JSON float; no config wants one.
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True,
                              allow_inf_nan=False)

    @classmethod
    def build(cls, data: dict[str, Any] | None = None, where: str = "", **kw: Any) -> Self:
        """Validate `data`, turning pydantic's report into one ConfigError line."""
        try:
            return cls.model_validate({**(data or {}), **kw})
        except ValidationError as e:
            raise ConfigError(format_validation_error(e, where)) from None

    def replace(self, **changes: Any) -> Self:
        return type(self).build({**self.model_dump(), **changes})


def format_validation_error(e: ValidationError, where: str = "") -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"])
        field = f"{where}.{loc}" if where and loc else (where or loc or "config")
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown key {field!r}; remove it or check its spelling")
        elif err["type"] == "missing":
            parts.append(f"missing key {field!r}; set it")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            parts.append(f"{field}: {msg}")
    return "; ".join(parts)
