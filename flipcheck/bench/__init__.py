"""``flipcheck bench``: measured speed (plan tasks per second, explored states per second,
sweep cases per second); speed goals are measured here, never by timed tests.
"""
