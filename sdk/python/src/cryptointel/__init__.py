"""The Python client of the cryptointel API.

    from cryptointel import Client
    client = Client("ci_...", base_url="http://localhost:8080")
    page = client.get_latest(limit=5)
"""

from ._client import DEFAULT_BASE_URL, VERSION, Client, Meta, RetryPolicy, StreamEvent, SubscriptionMessage
from ._errors import (APIConnectionError, APIError, APITimeoutError, AuthenticationError,
                      BadRequestError, ConflictError, CryptointelError, GraphQLError,
                      InternalServerError, InvalidSignatureError, NotFoundError,
                      PayloadTooLargeError, PaymentRequiredError, PermissionDeniedError,
                      RateLimitError, ServiceUnavailableError, StreamClosedError)
from ._generated import API_VERSION, ROUTES
from ._pandas import to_pandas
from ._payer import Payer, X402Payer, parse_payment_required
from ._webhook import verify_webhook

__version__ = VERSION

__all__ = [
    "Client", "Meta", "RetryPolicy", "StreamEvent", "SubscriptionMessage", "DEFAULT_BASE_URL", "VERSION",
    "API_VERSION", "ROUTES",
    "APIConnectionError", "APIError", "APITimeoutError", "AuthenticationError", "BadRequestError",
    "ConflictError", "CryptointelError", "GraphQLError", "InternalServerError", "InvalidSignatureError",
    "NotFoundError", "PayloadTooLargeError", "PaymentRequiredError", "PermissionDeniedError",
    "RateLimitError", "ServiceUnavailableError", "StreamClosedError", "to_pandas", "Payer", "X402Payer",
    "parse_payment_required", "verify_webhook", "__version__",
]
