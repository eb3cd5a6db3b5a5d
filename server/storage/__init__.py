"""Storage: SQLAlchemy models, the database and its migrations, the action journal."""
