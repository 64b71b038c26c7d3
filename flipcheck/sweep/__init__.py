"""Spark sweeps: ``runner`` fans cases out in resumable chunks, ``summary`` writes
summary.json and the minimised counterexamples, ``report`` the HTML report, ``spark`` starts
the session (``local[*]`` or any master, UI off, ports on 127.0.0.1).
"""
