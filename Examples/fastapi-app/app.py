"""A small CRUD API on FastAPI: the server the OpenAPI example generates its client from.

Items live in memory. Every verb is here, a 404 with a body of its own, and FastAPI's own 422
validation errors.
"""

from datetime import datetime, timezone
from enum import Enum

from fastapi import FastAPI, HTTPException, Query, Response
from pydantic import BaseModel, Field


class Kind(str, Enum):
    tool = "tool"
    part = "part"


class ItemIn(BaseModel):
    name: str = Field(min_length=1, description="What the item is called.")
    kind: Kind
    price_cents: int = Field(ge=0)
    tags: list[str] = []


class ItemPatch(BaseModel):
    name: str | None = Field(default=None, min_length=1)
    price_cents: int | None = Field(default=None, ge=0)


class Item(ItemIn):
    id: int
    created_at: datetime


class NotFound(BaseModel):
    detail: str


app = FastAPI(
    title="Items",
    version="1.0.0",
    generate_unique_id_function=lambda route: route.name,
)
items: dict[int, Item] = {}
CREATED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def find(item_id: int) -> Item:
    if item_id not in items:
        raise HTTPException(status_code=404, detail=f"no item {item_id}")
    return items[item_id]


@app.get("/items", response_model=list[Item])
def list_items(limit: int = Query(default=10, ge=1), tag: list[str] | None = Query(default=None)):
    """Lists items, those with every given tag."""
    chosen = [item for item in items.values() if all(t in item.tags for t in (tag or []))]
    return chosen[:limit]


@app.post("/items", response_model=Item, status_code=201)
def create_item(item: ItemIn):
    """Adds an item."""
    new = Item(id=len(items) + 1, created_at=CREATED, **item.model_dump())
    items[new.id] = new
    return new


@app.get("/items/{item_id}", response_model=Item, responses={404: {"model": NotFound}})
def show_item(item_id: int):
    """One item."""
    return find(item_id)


@app.put("/items/{item_id}", response_model=Item, responses={404: {"model": NotFound}})
def replace_item(item_id: int, item: ItemIn):
    """Replaces an item."""
    old = find(item_id)
    items[item_id] = Item(id=item_id, created_at=old.created_at, **item.model_dump())
    return items[item_id]


@app.patch("/items/{item_id}", response_model=Item, responses={404: {"model": NotFound}})
def rename_item(item_id: int, patch: ItemPatch):
    """Changes some of an item's fields."""
    old = find(item_id)
    items[item_id] = old.model_copy(update=patch.model_dump(exclude_none=True))
    return items[item_id]


@app.delete("/items/{item_id}", status_code=204, responses={404: {"model": NotFound}})
def delete_item(item_id: int):
    """Removes an item."""
    find(item_id)
    del items[item_id]
    return Response(status_code=204)
