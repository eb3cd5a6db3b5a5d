FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY gaps gaps
COPY server server
COPY client_cli client_cli
COPY migrations migrations
RUN pip install --no-cache-dir .
EXPOSE 8765
CMD ["gaps-server", "--host", "0.0.0.0", "--port", "8765"]
