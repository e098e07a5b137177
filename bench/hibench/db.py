"""SQL access through psql (the standard library has no PostgreSQL driver).

Values reach SQL only through lit(), which quotes them as SQL literals;
identifiers are never built here (the SQL functions quote them).
"""
import json
import subprocess


class SQLError(RuntimeError):
    pass


def lit(value):
    """A SQL literal for a Python value (dicts and lists become jsonb)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dict, list)):
        return lit(json.dumps(value, sort_keys=True)) + "::jsonb"
    return "'" + str(value).replace("'", "''") + "'"


class DB:
    def __init__(self, psql, host, port, dbname):
        self.psql = psql
        self.host = host
        self.port = port
        self.dbname = dbname

    def run(self, sql, dbname=None, timeout=None):
        """Run SQL (autocommit); returns (stdout, stderr). Raises SQLError."""
        cmd = [self.psql, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", self.host,
               "-p", str(self.port), "-U", "postgres", "-d", dbname or self.dbname]
        try:
            p = subprocess.run(cmd, input=sql, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise SQLError("timed out after %ss: %s" % (timeout, sql[:200])) from e
        if p.returncode != 0:
            raise SQLError(p.stderr.strip() or "psql exited with %d" % p.returncode)
        return p.stdout, p.stderr

    def rows(self, sql, dbname=None):
        """Rows of a query as a list of dicts."""
        out, _ = self.run("SELECT coalesce(json_agg(t), '[]') FROM (%s) t" % sql, dbname)
        return json.loads(out)

    def value(self, sql, dbname=None):
        out, _ = self.run(sql, dbname)
        return out.strip()

    def call(self, fn, *args, dbname=None):
        """SELECT fn(args...) with every argument as a literal."""
        return self.value("SELECT %s(%s)" % (fn, ", ".join(lit(a) for a in args)), dbname)
