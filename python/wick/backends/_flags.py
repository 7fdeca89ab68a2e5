"""A module or object attribute that reads and writes one of cuda/api.h's math-mode flags."""


def flag_property(getter, setter, doc):
    return property(lambda self: getter(), lambda self, value: setter(bool(value)), doc=doc)
