"""DataFrames of the feed, timeline and history routes, indexed by time.
pandas is optional: only to_pandas needs it."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Union

# The time of an item, by the first of these keys it has: an event's latest
# evidence (lean and full shapes), a day of a signal history, a post.
TIME_KEYS = ("latestEvidenceTimestamp", "latestPostTimestamp", "date", "timestamp", "at", "createdAt")


def _items(obj: Any) -> list[Mapping[str, Any]]:
    if isinstance(obj, Mapping):
        data = obj.get("data", obj)
        if isinstance(data, Mapping):  # signal history: {"data": {"history": [...]}}
            for key in ("history", "events", "data"):
                if isinstance(data.get(key), list):
                    return list(data[key])
            return [data]
        return list(data)
    return list(obj)


def to_pandas(obj: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]], time_key: Optional[str] = None):
    """A pandas DataFrame of a response (its ``data``), of a list of items or
    of a walk (``client.paginate(...)``), indexed by time (a UTC
    DatetimeIndex named after the time key) and sorted by it. ``time_key``
    picks the column; by default the first of TIME_KEYS the items have."""
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("to_pandas needs pandas: pip install 'cryptointel[pandas]'") from e
    items = _items(obj)
    df = pd.DataFrame(items)
    if time_key is None:
        time_key = next((k for k in TIME_KEYS if k in df.columns), None)
    if time_key is None:
        raise ValueError("no time column in these items: pass time_key")
    df[time_key] = pd.to_datetime(df[time_key], utc=True)
    return df.set_index(time_key).sort_index()
