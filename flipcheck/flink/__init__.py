"""The bridge to the real engine: Flink's own plans (REST and execution-plan JSON) imported
as job graphs (``import_plan``), Flink's logs read as checkpoint events (``logs``), and real
Flink 2.3 jobs run from job graphs on a local MiniCluster (``engine``).
"""
