"""Namespaced ids: a plugin's ``burning`` is ``hazards.burning`` (a leaf module, so the
declarations in ``_conditions`` and the catalog in ``_custom`` can both use it)."""

from __future__ import annotations


def qualify(namespace: str | None, name: str) -> str:
    """``name`` in ``namespace``: ``qualify("hazards", "burning") == "hazards.burning"``.

    A name already in the namespace is returned as is; without a namespace the name
    stays as written. Raises ``ValueError`` for a name in another plugin's namespace.
    """
    if namespace is None or name.startswith(namespace + "."):
        return name
    if "." in name:
        raise ValueError(
            f"{name!r} is in another namespace; plugin {namespace!r} declares its ids "
            f"short ({name.rsplit('.', 1)[-1]!r}) or as {namespace!r}.<name>"
        )
    return f"{namespace}.{name}"


def short_name(namespace: str | None, full: str) -> str:
    """The short name of ``full`` (its part after ``namespace.``)."""
    if namespace is not None and full.startswith(namespace + "."):
        return full[len(namespace) + 1 :]
    return full


__all__ = ["qualify", "short_name"]
