"""Django settings for the django-allauth headless peer (benchmark only, never a deployment).

Configured from the environment by peer.sh: PEER_DB (sqlite:/abs/path or postgres://...),
BCRYPT_COST (default 10).
"""

from __future__ import annotations

import os

import peerdb

DB = peerdb.from_env()
BCRYPT_COST = peerdb.bcrypt_cost()

SECRET_KEY = os.environ.get("PEER_SECRET_KEY", "gatehouse-benchmark-peer-not-a-secret-0123456789abcdef")
DEBUG = False
ALLOWED_HOSTS = ["*"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "allauth",
    "allauth.account",
    "allauth.headless",
]

MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "benchsite.urls"
ASGI_APPLICATION = "benchsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ]
        },
    }
]

if DB.kind == "sqlite":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DB.path,
            "OPTIONS": {
                # Same PRAGMAs as Gatehouse (WAL, busy_timeout 5000 ms, synchronous NORMAL).
                "init_command": "; ".join(peerdb.SQLITE_PRAGMAS) + ";",
                "timeout": peerdb.SQLITE_BUSY_TIMEOUT_MS / 1000,
                "transaction_mode": "IMMEDIATE",
            },
        }
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": DB.name,
            "USER": DB.user,
            "PASSWORD": DB.password,
            "HOST": DB.host,
            "PORT": str(DB.port),
            # Under ASGI Django runs each request's sync code in its own thread, so persistent
            # connections (CONN_MAX_AGE) are not reused; Django's docs point to the driver's pool.
            "OPTIONS": {"pool": {"min_size": 2, "max_size": 16, "timeout": 10}},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"

# bcrypt at Gatehouse's cost (plain bcrypt, $2b$<cost>$..., no SHA-256 pre-hash).
PASSWORD_HASHERS = [
    "benchsite.hashers.BenchBCryptPasswordHasher",
    "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS: list = []

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]

SESSION_ENGINE = "django.contrib.sessions.backends.db"  # the default; the session token is a session key
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"

# allauth: headless only, app client only (X-Session-Token), login by email, no verification.
HEADLESS_ONLY = True
HEADLESS_CLIENTS = ("app",)
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*"]
ACCOUNT_EMAIL_VERIFICATION = "none"
ACCOUNT_UNIQUE_EMAIL = True
# allauth rate-limits login (30/m/ip), failed logins and signup (20/m/ip) through the cache; a
# benchmark from one IP would hit those, so all of allauth's rate limits are off here.
ACCOUNT_RATE_LIMITS = False

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    # Only errors (5xx tracebacks) reach the gunicorn log; nothing is logged per request.
    "loggers": {"django": {"handlers": ["stderr"], "level": "ERROR", "propagate": False}},
}
