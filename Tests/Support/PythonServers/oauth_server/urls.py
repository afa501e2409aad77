"""The server's routes: DOT's endpoints under /o/, with this project's token endpoint, device
authorization endpoint and RFC 8414 metadata in place of DOT's; Django's login form; the API."""

from django.contrib.auth import views as auth_views
from django.urls import include, path
from oauth2_provider import urls as dot_urls
from oauth2_provider import views as dot

from . import views

# DOT's routes, in its namespace so that its views' reverse() calls resolve, with three replaced.
replaced = {"token", "device-authorization", "oauth-server-metadata"}
oauth_patterns = [
    path("token/", views.TokenView.as_view(), name="token"),
    path("device-authorization/", views.DeviceAuthorizationView.as_view(), name="device-authorization"),
    *[p for p in dot_urls.base_urlpatterns if p.name not in replaced],
]
# RFC 8414 and RFC 9728 documents at the origin's root (the issuer is the bare origin).
metadata_patterns = [
    path(
        ".well-known/oauth-authorization-server",
        views.ServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    *[p for p in dot_urls.metadata_urlpatterns if p.name == "oauth-resource-metadata"],
]

# One namespace for both, as DOT reverses the metadata routes' names too.
provider_patterns = [path("o/", include(oauth_patterns)), *metadata_patterns]

urlpatterns = [
    path("", include((provider_patterns, "oauth2_provider"))),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/done/", views.done, name="done"),
    path("api/me", views.me, name="me"),
    path("api/write", views.write, name="write"),
]
