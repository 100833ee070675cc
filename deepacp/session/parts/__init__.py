"""Session parts: one feature of a session each (restore points, saved replays, background
tasks, sandbox notices, the goal, MCP servers, hooks, the review inbox), behind one seam
(`base.Part`).

A part sees its session only through a `SessionContext` and hears of it through the hooks
of `Part`, each optional; the core calls them in the parts' order, as the harness runs its
middleware. Adding a session feature adds a part; the core does not grow.
"""
