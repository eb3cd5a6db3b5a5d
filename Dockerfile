# The wheel is built in a stage of its own and installed, not editable, in a clean image:
# the server runs from site-packages alone, migrations included (scripts/check-wheel tries
# the same in CI, since docker may not be there).
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY gaps gaps
COPY server server
COPY client_cli client_cli
COPY migrations migrations
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
# The server's extra only: no terminal client's dependencies (Textual) in the image.
RUN pip install --no-cache-dir "$(ls /wheels/*.whl)[server]" && rm -rf /wheels
# No checkout here: a data directory (var/, for SQLite without DATABASE_URL) and nothing else.
WORKDIR /app
EXPOSE 8765
CMD ["gaps-server", "--host", "0.0.0.0", "--port", "8765"]
