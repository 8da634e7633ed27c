from pydantic import BaseModel, ConfigDict, Field


class LengthFilterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_chars: int = Field(40, ge=0, description="Chunks with fewer characters are dropped.")
    keep_at_least: int = Field(1, ge=0, description="Never drop below this many chunks.")
