"""The state on its two engines: SQLite (the default) and a real MariaDB server (tests/mariadb.py)."""
from __future__ import annotations

import pymysql
from mariadb import PASSWORD, USER, mariadb, mariadb_url  # noqa: F401 - the fixtures


def test_the_test_server_is_a_real_mariadb_with_a_user_of_its_own(mariadb, mariadb_url):
    """The fixture's server runs unprivileged on its own socket and port, and the test user may use
    its database (utf8mb4, binary collation: "Town" and "town" are two titles, as on the wiki)."""
    database = mariadb_url.rsplit("/", 1)[1]
    conn = pymysql.connect(host="127.0.0.1", port=mariadb.port, user=USER, password=PASSWORD,
                           database=database, autocommit=True)
    with conn, conn.cursor() as cur:
        cur.execute("select version(), current_user()")
        version, user = cur.fetchone()
        assert "MariaDB" in version and user.startswith(USER + "@")
        cur.execute("create table t (title varchar(255) primary key)")
        cur.execute("insert into t values ('Town'), ('town'), ('Zürich ✓')")
        cur.execute("select title from t order by title")
        assert [r[0] for r in cur.fetchall()] == ["Town", "Zürich ✓", "town"]
    assert mariadb.socket.exists() and mariadb.process.poll() is None
