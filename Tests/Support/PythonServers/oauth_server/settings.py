"""Django settings of the test authorization server, built by serve.py once it knows its port.

Django is configured with ``settings.configure(**build(...))`` rather than a settings module,
since the port, the database folder and the command-line options are only known at run time.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def build(*, origin: str, data_dir: str, options) -> dict:
    """The settings for a server at `origin` (``http://127.0.0.1:PORT``)."""
    return {
        "DEBUG": False,
        "ALLOWED_HOSTS": ["127.0.0.1", "localhost"],
        # A fresh secret each run: sessions and CSRF tokens live as long as the process.
        "SECRET_KEY": os.urandom(32).hex(),
        "ROOT_URLCONF": "oauth_server.urls",
        "INSTALLED_APPS": [
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "oauth2_provider",
            "oauth_server",
        ],
        "MIDDLEWARE": [
            "oauth_server.middleware.RequestLogMiddleware",
            "django.middleware.common.CommonMiddleware",
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
        ],
        "TEMPLATES": [
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "DIRS": [os.path.join(HERE, "templates")],
                "APP_DIRS": True,
                "OPTIONS": {
                    "context_processors": [
                        "django.template.context_processors.request",
                        "django.contrib.auth.context_processors.auth",
                    ]
                },
            }
        ],
        "DATABASES": {
            "default": {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": os.path.join(data_dir, "db.sqlite3"),
                "OPTIONS": {
                    # Concurrent token requests write at once: wait for the lock rather than fail,
                    # and take it when a transaction starts (no deadlock on upgrading a read lock).
                    "timeout": 30,
                    "transaction_mode": "IMMEDIATE",
                    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;",
                },
            }
        },
        "DEFAULT_AUTO_FIELD": "django.db.models.BigAutoField",
        # Test passwords: a fast hasher (PBKDF2's million rounds would cost ~0.5 s a login).
        "PASSWORD_HASHERS": ["django.contrib.auth.hashers.MD5PasswordHasher"],
        "USE_TZ": True,
        "TIME_ZONE": "UTC",
        "USE_I18N": False,
        "STATIC_URL": "/static/",
        "LOGIN_URL": "/accounts/login/",
        "LOGIN_REDIRECT_URL": "/accounts/done/",
        "SESSION_ENGINE": "django.contrib.sessions.backends.signed_cookies",
        "LOGGING_CONFIG": None,
        "OAUTH_SERVER": {
            "ORIGIN": origin,
            "REQUEST_LOG": options.request_log,
            "DEVICE_SLOW_DOWN": options.device_slow_down,
            "DEVICE_CODE_EXPIRE_SECONDS": options.device_code_expires,
            "JWT_CLIENT_ID": options.jwt_client_id if options.jwt_public_key else None,
            "JWT_PUBLIC_KEY": options.jwt_public_key,
        },
        "OAUTH2_PROVIDER": {
            "OAUTH2_VALIDATOR_CLASS": "oauth_server.validators.Validator",
            "SCOPES": {"read": "Read your data", "write": "Change your data"},
            "DEFAULT_SCOPES": ["read", "write"],
            "ACCESS_TOKEN_EXPIRE_SECONDS": options.access_token_expires,
            "REFRESH_TOKEN_EXPIRE_SECONDS": None,
            "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
            # Rotation, and the old refresh token refused at once (no grace period).
            "ROTATE_REFRESH_TOKEN": True,
            "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
            "REFRESH_TOKEN_REUSE_PROTECTION": options.refresh_token_reuse_protection,
            "PKCE_REQUIRED": True,
            "REQUEST_APPROVAL_PROMPT": "force",
            "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
            # The issuer, and the host of every endpoint the metadata lists.
            "OIDC_ISS_ENDPOINT": origin,
            "DEVICE_FLOW_INTERVAL": options.device_interval,
            "OAUTH_DEVICE_VERIFICATION_URI": f"{origin}/o/device/",
            "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": f"{origin}/o/device/?user_code={{user_code}}",
            # RFC 9700 behaviour (S256 only, no implicit or password grant, no token in a query,
            # `iss` in the authorization response, tokens stored hashed).
            "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
            "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
            "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
            "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
            "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
            "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
            # What the RFC 8414 metadata lists.
            "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
            "OAUTH2_GRANT_TYPES_SUPPORTED": [
                "authorization_code",
                "client_credentials",
                "refresh_token",
                "urn:ietf:params:oauth:grant-type:device_code",
            ],
            "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": (
                ["client_secret_basic", "client_secret_post", "none"]
                + (["private_key_jwt"] if options.jwt_public_key else [])
            ),
        },
    }
