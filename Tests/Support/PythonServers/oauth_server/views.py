"""The views this project adds to DOT's: the protected resource, the RFC 8414 metadata with the
device authorization endpoint, and a token endpoint whose device-code polling follows RFC 8628."""

import base64
import functools
import json
from urllib.parse import unquote_plus

from django import http
from django.conf import settings
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods
from oauth2_provider import views as dot
from oauth2_provider.models import get_device_grant_model, get_grant_model
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.www_authenticate import build_bearer_challenge, challenge_status
from oauthlib.common import Request as OAuthlibRequest
from oauthlib.oauth2 import DeviceApplicationServer, InvalidGrantError, OAuth2Error


def oauth_error(error: str, description: str, status: int = 400) -> http.JsonResponse:
    response = http.JsonResponse({"error": error, "error_description": description}, status=status)
    response["Cache-Control"] = "no-store"
    if status == 401:
        response["WWW-Authenticate"] = 'Basic realm="token endpoint"'
    return response


@functools.cache
def _core():
    return get_oauthlib_core()


def _bearer(scopes):
    """Serves the view only with a valid bearer token (in the Authorization header) having
    `scopes`; otherwise 401, or 403 for a valid token without them, each with a Bearer challenge
    (RFC 6750). The view gets the token's row as `request.access_token`."""

    def decorator(view):
        @functools.wraps(view)
        def checked(request, *args, **kwargs):
            valid, oauthlib_request = _core().verify_request(request, scopes=scopes)
            if not valid:
                error = getattr(oauthlib_request, "oauth2_error", None)
                response = http.HttpResponse(status=challenge_status(error))
                response["WWW-Authenticate"] = build_bearer_challenge(request, oauth2_error=error)
                return response
            request.access_token = oauthlib_request.access_token
            return view(request, *args, **kwargs)

        return checked

    return decorator


def _describe(access_token):
    return {
        "user": access_token.user.get_username() if access_token.user else None,
        "client_id": access_token.application.client_id,
        "scope": access_token.scope,
        "expires_in": max(0, int((access_token.expires - timezone.now()).total_seconds())),
    }


@require_http_methods(["GET", "HEAD"])
@_bearer([])
def me(request):
    """GET /api/me: whom the bearer token speaks for."""
    return http.JsonResponse(_describe(request.access_token))


@csrf_exempt
@require_http_methods(["POST"])
@_bearer(["write"])
def write(request):
    """POST /api/write: needs the `write` scope."""
    return http.JsonResponse({"written": True, **_describe(request.access_token)})


@require_GET
def done(request):
    """Where a login without a `next` lands."""
    return http.HttpResponse(f"Signed in as {request.user.get_username()}.\n", content_type="text/plain")


class ServerMetadataView(dot.OAuthServerMetadataView):
    """RFC 8414 metadata, with the device authorization endpoint DOT leaves out."""

    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        data = json.loads(response.content)
        data["device_authorization_endpoint"] = self._get_endpoint_url(request, "device-authorization")
        if "private_key_jwt" in data.get("token_endpoint_auth_methods_supported", []):
            data["token_endpoint_auth_signing_alg_values_supported"] = ["RS256", "ES256"]
        fresh = http.JsonResponse(data)
        fresh["Access-Control-Allow-Origin"] = "*"
        return fresh


class _DeviceServer(DeviceApplicationServer):
    """oauthlib's device server, with the device code's lifetime from the command line."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._expires_in = settings.OAUTH_SERVER["DEVICE_CODE_EXPIRE_SECONDS"]


class DeviceAuthorizationView(dot.DeviceAuthorizationView):
    """DOT's device authorization endpoint, with the checks it (with oauthlib 3.3) leaves out.

    Here a `Content-Type` with parameters (`; charset=utf-8`) is accepted, a client that
    authenticates with HTTP Basic need not repeat its `client_id` in the body, a client not
    registered for the device grant gets `unauthorized_client`, and an unknown scope
    `invalid_scope`, before any code is issued.
    """

    server_class = _DeviceServer

    def post(self, request, *args, **kwargs):
        content_type = request.META.get("CONTENT_TYPE", "")
        if content_type.split(";", 1)[0].strip().lower() == "application/x-www-form-urlencoded":
            request.META["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
        core = self.get_oauthlib_core()
        validator = core.server.request_validator
        uri, method, body, headers = core._extract_params(request)
        oauthlib_request = OAuthlibRequest(uri, method, body, headers)
        basic = validator._extract_basic_auth(oauthlib_request)
        if basic and "client_id" not in request.POST:
            try:
                client_id = unquote_plus(base64.b64decode(basic).decode().split(":", 1)[0])
            except ValueError:
                return oauth_error("invalid_client", "Client authentication failed.", 401)
            request.POST = request.POST.copy()
            request.POST["client_id"] = client_id
            uri, method, body, headers = core._extract_params(request)
            oauthlib_request = OAuthlibRequest(uri, method, body, headers)
        if oauthlib_request.client_id:
            try:
                core.server._raise_on_invalid_client(oauthlib_request)
            except OAuth2Error as error:
                return http.HttpResponse(error.json, status=error.status_code, content_type="application/json")
            client = oauthlib_request.client
            if not client.allows_grant_type(client.GRANT_DEVICE_CODE):
                return oauth_error("unauthorized_client", "This client may not use the device grant.")
            scopes = request.POST.get("scope", "").split()
            if scopes and not validator.validate_scopes(client.client_id, scopes, client, oauthlib_request):
                return oauth_error("invalid_scope", "Unknown scope.")
        response = super().post(request, *args, **kwargs)
        if response.status_code == 200:
            # DOT stores its model's default interval (5 s), whatever the response says.
            issued = json.loads(response.content)
            Device = get_device_grant_model()
            Device.objects.filter(device_code=issued["device_code"]).update(interval=issued["interval"])
        return response


class TokenView(dot.TokenView):
    """DOT's token endpoint; its device-code polling is replaced by one that follows RFC 8628.

    DOT answers an unknown device code with 404 `device_not_found`, reports `authorization_pending`
    past the code's expiry, never says `slow_down`, does not check that the code was issued to the
    client that polls (nor, while the grant is pending, the client's credentials), and issues
    tokens for the same approved device code again and again. Here: the client is authenticated on every poll; an unknown code, or one of
    another client, is `invalid_grant`; an expired code is `expired_token`; an approved code
    gives tokens once, and is `invalid_grant` after that; with `--device-slow-down`, a poll sooner
    than the interval after the previous one (or after the device authorization) is `slow_down`,
    and the interval grows by 5 seconds.
    """

    def create_token_response(self, request):
        """DOT reads an authorization code's row several times while checking a request: when
        a concurrent exchange of the same code deletes it in between, that is `invalid_grant`
        (as for a code used before), not a 500."""
        try:
            return super().create_token_response(request)
        except get_grant_model().DoesNotExist:
            error = InvalidGrantError()
            headers = {"Content-Type": "application/json", "Cache-Control": "no-store", "Pragma": "no-cache"}
            return None, headers, error.json, error.status_code

    def device_flow_token_response(self, request, device_code, *args, **kwargs):
        core = self.get_oauthlib_core()
        uri, method, body, headers = core._extract_params(request)
        oauthlib_request = OAuthlibRequest(uri, method, body, headers)
        if not core.server.request_validator.authenticate_client(oauthlib_request):
            return oauth_error("invalid_client", "Client authentication failed.", 401)
        client_id = oauthlib_request.client.client_id

        Device = get_device_grant_model()
        device = Device.objects.filter(device_code=device_code).first()
        if device is None or device.client_id != client_id:
            return oauth_error("invalid_grant", "Unknown device code.")
        if device.status == Device.DENIED:
            return oauth_error("access_denied", "The user denied the request.")
        if device.status == Device.EXPIRED and timezone.now() < device.expires:
            return oauth_error("invalid_grant", "The device code has been used.")
        if device.is_expired():
            return oauth_error("expired_token", "The device code has expired.")
        if device.status == Device.AUTHORIZATION_PENDING:
            if settings.OAUTH_SERVER["DEVICE_SLOW_DOWN"]:
                too_soon = (timezone.now() - device.last_checked).total_seconds() < device.interval
                if too_soon:
                    device.interval += 5
                device.save(update_fields=["interval", "last_checked"])
                if too_soon:
                    return oauth_error("slow_down", f"Poll at most every {device.interval} seconds.")
            return oauth_error("authorization_pending", "The user has not answered yet.")

        # Approved: only one poll may take it (EXPIRED stands for "used" from then on).
        if Device.objects.filter(pk=device.pk, status=Device.AUTHORIZED).update(status=Device.EXPIRED) != 1:
            return oauth_error("invalid_grant", "The device code has been used or has expired.")
        url, headers, body, status = self.create_token_response(request)
        if status != 200:
            Device.objects.filter(pk=device.pk).update(status=Device.AUTHORIZED)
        response = http.HttpResponse(content=body, status=status, content_type="application/json")
        for key, value in headers.items():
            response[key] = value
        return response
