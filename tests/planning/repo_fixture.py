"""A small web application in a real git repository, for plans, advice and evolution.

Auth (jwt), routes (flask), a database layer (sqlalchemy, a migration), an export
module, tests and docs; a change to the login handler is left staged.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, make_repo, write_files

AS_OF = 1_800_000_000

LOGIN = '''import jwt

from app.db.models import User


def login(username: str, password: str) -> str:
    """Check the password and return a signed session token."""
    user = User.find(username)
    if user is None or not user.check_password(password):
        raise PermissionError("bad credentials")
    return jwt.encode({"sub": user.id}, "secret-key-from-config")
'''

FILES: dict[str, str] = {
    "app/__init__.py": "",
    "app/auth/__init__.py": "",
    "app/auth/login.py": LOGIN,
    "app/routes/__init__.py": "",
    "app/routes/users.py": (
        "from flask import Blueprint, jsonify\n\nfrom app.db.models import User\n\n"
        'bp = Blueprint("users", __name__)\n\n\n@bp.route("/users")\n'
        "def list_users():\n    return jsonify([u.name for u in User.all()])\n"
    ),
    "app/db/__init__.py": "",
    "app/db/models.py": (
        "from sqlalchemy.orm import DeclarativeBase\n\n\nclass Base(DeclarativeBase):\n"
        "    pass\n\n\nclass User(Base):\n    __tablename__ = 'users'\n\n"
        "    @classmethod\n    def find(cls, name):\n        return None\n\n"
        "    @classmethod\n    def all(cls):\n        return []\n\n"
        "    def check_password(self, password):\n        return False\n"
    ),
    "app/db/migrations/0001_users.sql": "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);\n",
    "app/export.py": (
        "import csv\nimport io\n\n\ndef export_report(rows: list[dict]) -> str:\n"
        '    """Render report rows as CSV."""\n    out = io.StringIO()\n'
        "    writer = csv.DictWriter(out, fieldnames=list(rows[0]))\n"
        "    writer.writeheader()\n    writer.writerows(rows)\n    return out.getvalue()\n"
    ),
    "tests/__init__.py": "",
    "tests/test_login.py": (
        "import pytest\n\nfrom app.auth.login import login\n\n\n"
        "def test_bad_password():\n    with pytest.raises(PermissionError):\n"
        '        login("ann", "nope")\n'
    ),
    "tests/test_export.py": (
        "from app.export import export_report\n\n\ndef test_export():\n"
        '    assert export_report([{"a": 1}]).startswith("a")\n'
    ),
    "docs/index.md": "# Service\n\nUsers log in and export reports.\n",
    "README.md": "# service\n\nA small web service.\n",
}


def build_repo(root: Path) -> Path:
    """Commit the files, then stage a change to the login handler."""
    make_repo(root, FILES)
    write_files(
        root,
        {
            "app/auth/login.py": LOGIN.replace(
                "    user = User.find(username)\n",
                "    username = username.strip().lower()\n    user = User.find(username)\n",
            )
        },
    )
    git(root, "add", "app/auth/login.py")
    return root
