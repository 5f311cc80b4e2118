//! Reading the surface from a connected server: the one impure part of inspection.

use serde_json::value::RawValue;

use super::{Entry, Surface};
use crate::client::{Client, ClientError, js_truthy};

/// Lists tools (a failure here is a failure to inspect), then resources and templates when
/// `resources` is advertised, then prompts when `prompts` is. A failing resource or prompt
/// listing is kept as its message (it becomes CAS-C006/C007); a failing template listing is
/// ignored. Servers that advertise neither are never asked.
pub async fn collect(client: &mut Client) -> Result<Surface, ClientError> {
    let tools = entries(&client.list_all_raw("tools/list", "tools").await?);
    let advertised = |client: &Client, capability: &str| {
        client.capabilities().get(capability).is_some_and(js_truthy)
    };
    let mut surface = Surface {
        tools,
        ..Surface::default()
    };
    if advertised(client, "resources") {
        surface.resources = Some(
            client
                .list_all_raw("resources/list", "resources")
                .await
                .map(|items| entries(&items))
                .map_err(|err| err.to_string()),
        );
        if let Ok(items) = client
            .list_all_raw("resources/templates/list", "resourceTemplates")
            .await
        {
            surface.resource_templates = entries(&items);
        }
    }
    if advertised(client, "prompts") {
        surface.prompts = Some(
            client
                .list_all_raw("prompts/list", "prompts")
                .await
                .map(|items| entries(&items))
                .map_err(|err| err.to_string()),
        );
    }
    Ok(surface)
}

fn entries(items: &[Box<RawValue>]) -> Vec<Entry> {
    items.iter().map(|item| Entry::read(item)).collect()
}
