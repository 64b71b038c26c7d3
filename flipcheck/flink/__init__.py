"""The bridge to the real engine: Flink's own plans (REST and execution-plan JSON) imported
as job graphs (``import_plan``).
"""
