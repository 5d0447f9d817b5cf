"""Stand-in for `prime-pydantic-config`'s `BaseConfig` (the package is not installable
here). It reproduces what the models depend on: `extra="forbid"` and the before-validators
that turn `"None"` into None and inject a defaulted discriminator `type`
(`src/pydantic_config/cli.py` of PrimeIntellect-ai/pydantic-config). The CLI parser is
not needed to import or validate the models."""

from pydantic import BaseModel, ConfigDict, model_validator


class BaseConfig(BaseModel):
    """Strict config base: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _none_str_to_none(cls, data):
        if isinstance(data, dict):
            for key, value in data.items():
                if value == "None":
                    data[key] = None
        return data

    @model_validator(mode="before")
    @classmethod
    def _default_discriminator_types(cls, data):
        if isinstance(data, dict):
            for name, info in cls.model_fields.items():
                value = data.get(name)
                default = info.default
                if isinstance(value, dict) and "type" not in value:
                    if isinstance(default, BaseModel) and hasattr(default, "type"):
                        value["type"] = default.type
        return data


def cli(*_args, **_kwargs):
    raise NotImplementedError("the pydantic_config CLI is not part of this stand-in")
