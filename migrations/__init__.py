"""The alembic migrations of the database schema.

A package only so that the wheel can carry them: pyproject.toml installs this directory
as ``server.storage.migrations``, where server/storage/database.py finds it. alembic
itself reads env.py and versions/ as files.
"""
