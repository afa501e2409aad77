"""Client authentication with ``private_key_jwt`` (RFC 7523 section 2.2), which DOT lacks.

A client that sends ``client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer``
and a ``client_assertion`` is authenticated by that JWT alone: it must be signed with RS256 or ES256
by the key whose public half was given with ``--jwt-public-key`` (for the client ``--jwt-client-id``),
have ``iss`` = ``sub`` = that client id, ``aud`` = the token endpoint's URL, an ``exp`` in the
future (no leeway), and a ``jti`` not seen before in this process. Every other request is
authenticated as DOT does (``client_secret_basic``, ``client_secret_post``, or a public client's
``client_id``).
"""

import logging
import threading
import time

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from django.conf import settings
from django.db import transaction
from oauth2_provider.models import get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

log = logging.getLogger("oauth_server")

# Why the last client authentication of this thread's request failed, for the request log.
failure = threading.local()


def note_failure(reason: str) -> bool:
    failure.reason = reason
    log.warning("client authentication failed: %s", reason)
    return False


class _JWTClientKey:
    """The one client's public key, read once, and the assertion ids already used."""

    _lock = threading.Lock()
    _loaded = False
    key = None
    algorithm = None
    seen_jti: dict[str, float] = {}

    @classmethod
    def load(cls):
        with cls._lock:
            if not cls._loaded:
                path = settings.OAUTH_SERVER["JWT_PUBLIC_KEY"]
                if path:
                    with open(path, "rb") as f:
                        key = load_pem_public_key(f.read())
                    if isinstance(key, rsa.RSAPublicKey):
                        cls.algorithm = "RS256"
                    elif isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
                        cls.algorithm = "ES256"
                    else:
                        raise ValueError(f"{path}: neither an RSA nor a P-256 public key")
                    cls.key = key
                cls._loaded = True
        return cls

    @classmethod
    def use_jti(cls, jti: str, expires: float) -> bool:
        """Records `jti`; false if it was already used by an assertion that has not expired."""
        now = time.time()
        with cls._lock:
            for old in [j for j, e in cls.seen_jti.items() if e < now]:
                del cls.seen_jti[old]
            if jti in cls.seen_jti:
                return False
            cls.seen_jti[jti] = expires
            return True


class Validator(OAuth2Validator):
    def authenticate_client(self, request, *args, **kwargs):
        failure.reason = None
        assertion_type = request._params.get("client_assertion_type")
        assertion = request._params.get("client_assertion")
        if assertion_type is None and assertion is None:
            if super().authenticate_client(request, *args, **kwargs):
                return True
            return note_failure("client id or secret not accepted")
        if assertion_type != JWT_BEARER:
            return note_failure("unsupported client_assertion_type")
        if not assertion:
            return note_failure("client_assertion missing")
        if self._extract_basic_auth(request) or request._params.get("client_secret"):
            return note_failure("more than one client authentication method")
        return self._authenticate_assertion(request, assertion)

    def _authenticate_assertion(self, request, assertion):
        config = settings.OAUTH_SERVER
        client_id = config["JWT_CLIENT_ID"]
        keys = _JWTClientKey.load()
        if client_id is None or keys.key is None:
            return note_failure("no client authenticates with private_key_jwt")
        token_endpoint = f"{config['ORIGIN']}/o/token/"
        try:
            header = jwt.get_unverified_header(assertion)
            if header.get("alg") != keys.algorithm:
                return note_failure(f"assertion alg {header.get('alg')!r}, key needs {keys.algorithm}")
            claims = jwt.decode(
                assertion,
                keys.key,
                algorithms=[keys.algorithm],
                audience=token_endpoint,
                issuer=client_id,
                leeway=0,
                options={"require": ["iss", "sub", "aud", "exp", "jti"], "strict_aud": False},
            )
        except jwt.PyJWTError as error:
            return note_failure(f"assertion refused: {type(error).__name__}: {error}")
        if claims["sub"] != client_id:
            return note_failure("assertion sub is not the client id")
        if request.client_id and request.client_id != client_id:
            return note_failure("client_id parameter differs from the assertion's sub")
        if not isinstance(claims["jti"], str) or not keys.use_jti(claims["jti"], float(claims["exp"])):
            return note_failure("assertion jti not a string, or already used")
        if self._load_application(client_id, request) is None:
            return note_failure("the assertion's client is not registered")
        request.client_id = client_id
        return True

    def save_bearer_token(self, token, request, *args, **kwargs):
        """DOT checks that a refresh token is not revoked before this transaction: of two
        concurrent refreshes with one token, the second would get the first one's new tokens
        (and, with tokens stored hashed, fail with a 500). Checked again here, in the write
        transaction (SQLite's are serialised), the second is refused with `invalid_grant`."""
        presented = getattr(request, "refresh_token_instance", None)
        with transaction.atomic():
            if request.grant_type == "refresh_token" and presented is not None:
                live = get_refresh_token_model().objects.filter(pk=presented.pk, revoked__isnull=True)
                if not live.exists():
                    raise errors.InvalidGrantError(request=request)
            return super().save_bearer_token(token, request, *args, **kwargs)

    def client_authentication_required(self, request, *args, **kwargs):
        if request._params.get("client_assertion") or request._params.get("client_assertion_type"):
            return True
        return super().client_authentication_required(request, *args, **kwargs)
