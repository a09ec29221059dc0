// A small typed client over the types openapi-typescript generates from
// api/openapi.yaml (TestOpenAPIClientGenerator writes them to api.d.ts next
// to a copy of this file and runs tsc --noEmit --strict on both). It uses
// operations by operationId, paths, request bodies, parameters and
// components, so a generator that drops or mangles any of them fails.
import type { components, operations, paths } from "./api";

type JSONOf<R> = R extends { content: { "application/json": infer T } } ? T : never;

export type Order = JSONOf<operations["placeOrderV9"]["responses"][201]>;
export type Product = components["schemas"]["Product"];
export type PlaceOrderBody = NonNullable<operations["placeOrderV9"]["requestBody"]>["content"]["application/json"];
export type Departures = JSONOf<operations["getDepartures"]["responses"][200]>;
export type DeparturesQuery = operations["getDepartures"]["parameters"]["query"];
type OrderPath = paths["/v9/ticketing/orders.json"]["post"];
type ProductByID = JSONOf<paths["/v6/ticketing/products/{product_id}.json"]["get"]["responses"][200]>;

export async function placeOrder(base: string, key: string, body: PlaceOrderBody): Promise<Order> {
  const res = await fetch(`${base}/v9/ticketing/orders.json`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) {
    const err: JSONOf<OrderPath["responses"]["default"]> = await res.json();
    throw new Error(`${err.code}: ${err.message}`);
  }
  return (await res.json()) as Order;
}

export function firstCoupon(order: Order): string {
  return order.coupons[0].id;
}

export function productPrice(p: Product | ProductByID): string {
  return `${(p.price_in_cents / 100).toFixed(2)} ${p.currency}`;
}

export function departuresURL(base: string, q: NonNullable<DeparturesQuery>): string {
  const u = new URL("/v1/departures.json", base);
  u.searchParams.set("station_id", q.station_id);
  return u.toString();
}

export function headsigns(board: Departures): string[] {
  return board.map((d) => d.trip.headsign ?? "");
}

export const order: PlaceOrderBody = { product_ids: ["farebox-product-1"], optional_order_reference: "booking-4711" };
