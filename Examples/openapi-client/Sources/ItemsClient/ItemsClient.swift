// The Items API's requests and types, generated at build time by ResourcefulOpenAPIPlugin from
// `openapi.json` (which `make examples` fetches from the FastAPI app in `fastapi-app/`) and
// `resourceful-openapi.json` in this folder: `Items.ListItems`, `Items.CreateItem`, `Items.Item`…

import Resourceful

extension Items {
    /// The service name the Items API's credential is stored under.
    public static let service = "items"
}
